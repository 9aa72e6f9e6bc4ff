"""groupctl.render"""
