# plugins/kernel
