"""The pure core shared by every Modelplane function: vocabulary, names, labels."""
