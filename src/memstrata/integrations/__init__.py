"""Adapters between memstrata and agent frameworks (optional extras).

``memstrata.integrations.langchain`` (``pip install 'memstrata[langchain]'``): a LangChain chat
message history on a memstrata session and a retriever over :meth:`memstrata.Memory.search`.
"""
