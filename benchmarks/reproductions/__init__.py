"""Reproductions of published figures and tables, our numbers beside the papers'."""
