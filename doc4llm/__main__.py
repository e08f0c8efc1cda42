from doc4llm.cli import main

main()
