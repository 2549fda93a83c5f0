from layerpath.plugin.app import run

run()
