from copeca_action.demo_tool._server import main

main()
