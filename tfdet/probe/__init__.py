"""tfdet probe: measure run-to-run variance of TensorFlow ops and the cost of determinism modes."""
