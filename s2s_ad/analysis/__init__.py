"""Stage 3, analysis: facts about an SSA function that the generators and passes need.

Input: an ``ir.Function`` in SSA form and the kinds of its arguments.  Output: an ``Analysis``
(``facts``): which values are active, their shape classes and kinds, how often each is read,
index ranges proven (``index_ranges``); ``factcheck`` re-derives them to check a pass kept them
true, ``factdump`` prints them; ``form_checks`` checks what generated code keeps through the passes
after generation (``S2S_AD_CHECK_PASSES=1``).
"""
