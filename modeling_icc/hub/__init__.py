"""Publishing to the Hub: cards generated from measured results, and upload folders built and checked offline."""
