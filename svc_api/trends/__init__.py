"""trends"""
