from layerpath.plugin.app import main

raise SystemExit(main())
