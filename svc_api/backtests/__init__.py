"""backtests"""
