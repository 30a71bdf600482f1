"""The BatchRequestsManager and BatchRequestsQueue: accepting, persisting and ordering jobs."""
