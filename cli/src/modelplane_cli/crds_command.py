"""`make crds`: download the pinned upstream CRDs into .crds/ (`schema.upstream`)."""

import sys

from modelplane_cli.schema.upstream import main

if __name__ == "__main__":
    sys.exit(main())
