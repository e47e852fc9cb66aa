"""The ONNX ``Upsample`` operator as the semantics define it (numpy only).

The single owner of the operator's rules: mode names (:mod:`.modes`), element types
(:mod:`.dtypes`), the per-axis rules (:mod:`.rules`) and the checked call with every argument
message (:mod:`.call`). Every other layer imports these; none restates them. The slow
reference (:mod:`onnx_upsample.reference`) is the deliberate exception: it re-derives the
rules in its own scalar formulas, as the oracle the fast path is checked against.
"""
