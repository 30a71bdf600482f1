"""Model packages: the index that lists them, the installer that downloads, verifies and
lays them out under the models folder, and the manifest each installed model carries."""
