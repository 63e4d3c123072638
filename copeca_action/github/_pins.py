"""Third-party actions this project's YAML uses, pinned by commit (tags can move)."""

from copeca_action import __version__

CHECKOUT = "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2"
UPLOAD_ARTIFACT = "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.2"
DOWNLOAD_ARTIFACT = ("actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093"
                     " # v4.3.0")
ACTION = f"copeca-action/copeca-action@v{__version__}"
"""How a user's workflow refers to this action (`copeca-action init --action` overrides)."""
