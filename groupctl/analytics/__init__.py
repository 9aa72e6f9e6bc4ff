"""groupctl.analytics"""
