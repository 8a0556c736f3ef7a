# plugins/callgraph
