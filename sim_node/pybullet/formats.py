"""(placeholder: filled by issue 14)"""
__all__: list = []
