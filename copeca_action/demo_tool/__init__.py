"""The demo tool: a small stdio MCP server with a code-search tool over the working folder.
It is the `codesearch` mode's tool in the bundled demo: `python -m copeca_action.demo_tool`."""

from copeca_action.demo_tool._search import definition, search
from copeca_action.demo_tool._server import TOOLS, CodeSearchServer, serve

__all__ = ["TOOLS", "CodeSearchServer", "definition", "search", "serve"]
