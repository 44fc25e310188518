"""python3 -m shardid_fleet: the command line, as the launcher
(tools/shardid-fleet, installed as /usr/bin/shardid-fleet) runs it.  The
package must be on the module path: PYTHONPATH=tools in the source tree,
PYTHONPATH=/usr/share/shardid-fleet where the Debian package installed it."""

import sys

from .cli import main

sys.exit(main(sys.argv[1:]))
