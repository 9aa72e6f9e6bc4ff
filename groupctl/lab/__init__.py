"""groupctl.lab"""
