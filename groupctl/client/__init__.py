"""groupctl.client"""
