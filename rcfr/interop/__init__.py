"""Bridges to other game libraries (OpenSpiel): games in, policies out and back."""
