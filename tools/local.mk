# tools/ - opreport, ophelp, opcontrol, opcount
