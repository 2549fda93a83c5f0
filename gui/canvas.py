"""The canvas: the composite picture with zoom and pan, and selection tools (rectangle,
lasso, brush) that tell the engine where "this" is."""

from __future__ import annotations

from enum import Enum

import cv2
import numpy as np

from layerpath.gui.qt import Qt, QtCore, QtGui, QtWidgets, Signal, event_point
from layerpath.gui.steps import rgba_image


class Tool(str, Enum):
    PAN = "pan"
    RECTANGLE = "rectangle"
    LASSO = "lasso"
    BRUSH = "brush"
    OBJECT = "object"  # a click: the object under it, cut by GrabCut


SELECTION_COLOR = (255, 40, 90, 110)


class CanvasView(QtWidgets.QGraphicsView):
    """Shows an RGBA picture; the selection is a boolean mask of the picture's size."""

    selection_changed = Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setScene(QtWidgets.QGraphicsScene(self))
        self._picture = QtWidgets.QGraphicsPixmapItem()
        self._overlay = QtWidgets.QGraphicsPixmapItem()
        self._picture.setTransformationMode(Qt.TransformationMode.SmoothTransformation)
        self.scene().addItem(self._picture)
        self.scene().addItem(self._overlay)
        self.setBackgroundBrush(QtGui.QBrush(QtGui.QColor(60, 60, 60)))
        self.setTransformationAnchor(QtWidgets.QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.selection: np.ndarray | None = None
        self._pixels: np.ndarray | None = None  # what is shown (for the object tool)
        self.brush_radius = 12
        self._tool = Tool.PAN
        self._drag: list[tuple[int, int]] = []
        self.set_tool(Tool.PAN)

    # --- picture -------------------------------------------------------------------------

    def show_picture(self, pixels: np.ndarray) -> None:
        self._pixels = pixels
        self._picture.setPixmap(QtGui.QPixmap.fromImage(rgba_image(pixels)))
        self.scene().setSceneRect(QtCore.QRectF(0, 0, pixels.shape[1], pixels.shape[0]))
        if self.selection is not None and self.selection.shape != pixels.shape[:2]:
            self.clear_selection()

    def picture_size(self) -> tuple[int, int]:
        pixmap = self._picture.pixmap()
        return pixmap.width(), pixmap.height()

    def fit(self) -> None:
        self.fitInView(self.scene().sceneRect(), Qt.AspectRatioMode.KeepAspectRatio)

    def zoom(self, factor: float) -> None:
        self.scale(factor, factor)

    def wheelEvent(self, event: QtGui.QWheelEvent | None) -> None:  # noqa: N802
        if event is not None:
            self.zoom(1.25 if event.angleDelta().y() > 0 else 0.8)

    # --- selection -----------------------------------------------------------------------

    def set_tool(self, tool: Tool) -> None:
        self._tool = tool
        mode = QtWidgets.QGraphicsView.DragMode
        self.setDragMode(mode.ScrollHandDrag if tool == Tool.PAN else mode.NoDrag)

    def clear_selection(self) -> None:
        self.selection = None
        self._overlay.setPixmap(QtGui.QPixmap())
        self.selection_changed.emit()

    def select_rectangle(self, x0: int, y0: int, x1: int, y1: int) -> None:
        mask = self._blank()
        mask[min(y0, y1) : max(y0, y1) + 1, min(x0, x1) : max(x0, x1) + 1] = True
        self._set_selection(mask)

    def select_polygon(self, points: list[tuple[int, int]]) -> None:
        canvas = self._blank().astype(np.uint8)
        cv2.fillPoly(canvas, [np.array(points, dtype=np.int32)], 1)
        self._set_selection(canvas.astype(bool))

    def paint(self, points: list[tuple[int, int]]) -> None:
        """Brush strokes add to the selection."""
        canvas = (self.selection if self.selection is not None else self._blank()).astype(np.uint8)
        for a, b in zip(points, points[1:] or points, strict=False):
            cv2.line(canvas, a, b, 1, 2 * self.brush_radius)
        self._set_selection(canvas.astype(bool))

    def select_object(self, x: int, y: int) -> None:
        """Select the object under a click (tools/finders.object_at)."""
        from layerpath.errors import LayerpathError
        from layerpath.tools.finders import object_at

        if self._pixels is None:
            return
        try:
            self._set_selection(object_at(np.ascontiguousarray(self._pixels[..., :3]), (x, y)))
        except LayerpathError:
            self.clear_selection()

    def _blank(self) -> np.ndarray:
        w, h = self.picture_size()
        return np.zeros((h, w), dtype=bool)

    def _set_selection(self, mask: np.ndarray) -> None:
        self.selection = mask if mask.any() else None
        overlay = np.zeros((*mask.shape, 4), dtype=np.uint8)
        overlay[mask] = SELECTION_COLOR
        self._overlay.setPixmap(QtGui.QPixmap.fromImage(rgba_image(overlay)))
        self.selection_changed.emit()

    def _image_point(self, event: QtGui.QMouseEvent) -> tuple[int, int]:
        point = self.mapToScene(event_point(event))
        w, h = self.picture_size()
        return int(np.clip(point.x(), 0, w - 1)), int(np.clip(point.y(), 0, h - 1))

    def mousePressEvent(self, event: QtGui.QMouseEvent | None) -> None:  # noqa: N802
        if event is None or self._tool == Tool.PAN or event.button() != Qt.MouseButton.LeftButton:
            super().mousePressEvent(event)
            return
        self._drag = [self._image_point(event)]
        if self._tool == Tool.BRUSH:
            self.paint(self._drag)

    def mouseMoveEvent(self, event: QtGui.QMouseEvent | None) -> None:  # noqa: N802
        if event is None or not self._drag:
            super().mouseMoveEvent(event)
            return
        self._drag.append(self._image_point(event))
        if self._tool == Tool.BRUSH:
            self.paint(self._drag[-2:])

    def mouseReleaseEvent(self, event: QtGui.QMouseEvent | None) -> None:  # noqa: N802
        if event is None or not self._drag:
            super().mouseReleaseEvent(event)
            return
        self._drag.append(self._image_point(event))
        if self._tool == Tool.RECTANGLE:
            (x0, y0), (x1, y1) = self._drag[0], self._drag[-1]
            self.select_rectangle(x0, y0, x1, y1)
        elif self._tool == Tool.OBJECT:
            self.select_object(*self._drag[-1])
        elif self._tool == Tool.LASSO and len(self._drag) >= 3:
            self.select_polygon(self._drag)
        self._drag = []
