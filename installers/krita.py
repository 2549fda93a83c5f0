"""Install layerpath into Krita from a checkout, without installing layerpath first
(stdlib only; run with any Python 3.10+): the same commands as `layerpath krita`.

python3 installers/krita.py install | package | env   (--help for their options)
"""

import runpy
from pathlib import Path

if __name__ == "__main__":
    installer = Path(__file__).resolve().parents[1] / "plugin" / "krita" / "installer.py"
    runpy.run_path(str(installer), run_name="__main__")
