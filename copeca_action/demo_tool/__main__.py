"""`python -m copeca_action.demo_tool`, or `python PATH/TO/demo_tool` (the folder itself),
which starts in a tenth of the time because it does not import the copeca_action package:
MCP clients such as Codex may send their first request before a slow server is ready."""

if __package__:
    from copeca_action.demo_tool._server import main
else:
    from _server import main  # type: ignore[import-not-found,no-redef]

main()
