"""The floor under the engine and the tools: the vocabulary both speak (kit/types.py:
subtasks, artefacts, boxes, tool specs and results), colours by name and colour spaces
(kit/colours.py), and the pixel kit both the checks and the tools use (kit/imaging.py:
masks, channels, filters; kit/regions.py: boxes, crops and windows). It imports nothing
from engine/ or tools/.
"""
