"""What a host needs: the Document protocol, RunSession (one document's runs without Qt), batch runs over many photos, and their spread over processes."""
