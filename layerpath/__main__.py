from layerpath.engine.cli import main

raise SystemExit(main())
