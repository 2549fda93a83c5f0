"""The floor under the engine and the tools: the vocabulary both speak (kit/types.py:
subtasks, artefacts, boxes, tool specs and results), colours by name and colour spaces
(kit/colours.py), and the pixel kit both the checks and the tools use (kit/imaging.py:
masks, channels, filters; kit/regions.py: boxes, crops and windows; kit/segments.py:
colour regions, border saliency; kit/sky.py and kit/sky_edge.py: where the sky is, its
edge, a reference's sky; kit/fonts.py: fonts that fit a box, which font text is set
in). It imports nothing from engine/ or tools/. What a tool family offers the engine
besides its tools (reading text back, CLIP's similarity) is a service the catalogue
binds by name (tools/registry.py's service()).
"""
