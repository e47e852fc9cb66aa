from ._check import Finding, check
from ._convert import downgrade, upgrade
from ._evaluator import Upsample
from ._fold import fold_scales
from ._infer import infer_shapes

__all__ = ["Finding", "Upsample", "check", "downgrade", "fold_scales", "infer_shapes", "upgrade"]
