"""The driver: one build of a derivative, stage after stage.

Input: a function, what to differentiate by, the argument kinds and a target.  Output: the built
derivative (``pipeline.Built``): front end, lowering, analysis, the generator, the passes in the
order ``pass_manager`` declares (with a check after each where asked), and the target's code,
cached on disk (``cache``) and tied to the source it read (``reach``).
"""
