# plugins/timer
