"""Network surfaces over the Memory facade: the HTTP API (``engram.server.http``,
extra ``engram-agentmem[server]``) and the MCP server (``engram.server.mcp``, extra
``engram-agentmem[mcp]``). Nothing is imported here, so ``import engram`` never needs them."""
