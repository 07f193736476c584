"""credits"""
