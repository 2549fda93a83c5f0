"""Files: reading and writing pictures and layered documents (ORA, PSD, flat files, 16 bits, metadata kept), and the run report."""
