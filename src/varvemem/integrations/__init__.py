"""Adapters between varvemem and agent frameworks (optional extras).

``varvemem.integrations.langchain`` (``pip install 'varvemem[langchain]'``): a LangChain chat
message history on a varvemem session and a retriever over :meth:`varvemem.Memory.search`.
"""
