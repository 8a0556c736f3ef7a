# plugins/ibs
