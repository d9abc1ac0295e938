"""Drives the hearth stdio agent with the official ACP Python SDK and validates its frames."""
