"""Complete programs written with functrace's public API (the ``demo`` command runs them).

``char_transformer``: a character-level, decoder-only transformer trained on the
embedded sonnets (``functrace.data.load_text``), with a jit-compiled training step and
jit-compiled sampling.
"""
