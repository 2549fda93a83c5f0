"""The Krita plugin: the panel as a Krita docker over a KritaDocument adapter.

Only this package imports `krita`. What gets copied into Krita's pykrita folder is the
small loader in pykrita/ (it finds layerpath's Python environment first); the rest
runs from that environment as `layerpath.plugin.krita`.
"""
