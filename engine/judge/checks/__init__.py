"""The quality checks of image edits: each looks at the picture before and after a step
(and the subtask's mask or text boxes) and says, as a score in 0..1 with a reason,
whether a photographer would accept the result. 0.5 is where accepting starts: each
check's defects are measured in units of their tolerance (1 = at the tolerance), and
the score is 0.5 to the power of their combined size, so a result exactly at the
tolerance of one defect scores 0.5. The tolerances are set on the labelled check set
(`layerpath bench checks`, benchmarks/checkset.py)."""

from layerpath.engine.judge.checks.verdict import Verdict, verdict

__all__ = ["Verdict", "verdict"]
