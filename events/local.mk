# events/ - event catalogues, installed to $(pkgdatadir)/events
