"""groupctl.coordinator"""
