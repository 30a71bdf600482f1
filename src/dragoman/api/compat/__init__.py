"""Other services' APIs over dragoman, one router module each, beside ``/v1``."""
