"""keys"""
