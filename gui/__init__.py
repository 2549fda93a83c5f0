"""Qt widgets: the panel, the step list, the settings dialog and the standalone editor.

Qt comes only through `layerpath.gui.qt`, so the same widgets run under PyQt6
(standalone, Krita 6) and PyQt5 (Krita 5).
"""
