"""groupctl.observe"""
