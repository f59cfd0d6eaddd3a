"""Deblurring by gradient descent: undo a 3x3 box blur on a 48x48 image.

The blur is plain NumPy: pad the image by repeating its edge, then average
the nine shifted copies. s2s_ad differentiates the loss

    sum((blur(guess) - observed)**2) + smoothness * sum(squared neighbour differences)

with respect to the guess (through the call to `blur`), and gradient descent
walks the guess from the blurred image back towards the sharp one. The error
to the ground truth, which the optimiser never sees, falls step by step.

Run: python examples/deblur.py [--steps N] [--out FOLDER]
(writes sharp/blurred/recovered PNGs into FOLDER, a temporary folder by
default, when Pillow or matplotlib is installed)
"""
import argparse
import pathlib
import tempfile

import numpy as np

import s2s_ad


def blur(image):
    """3x3 box blur; the border repeats the edge pixels."""
    padded = np.pad(image, 1, mode="edge")
    rows, cols = image.shape
    total = np.zeros((rows, cols))
    for di in range(3):
        for dj in range(3):
            total = total + padded[di:di + rows, dj:dj + cols]
    return total / 9.0


def roughness(image):
    """Sum of squared differences between neighbouring pixels."""
    across = image[:, 1:] - image[:, :-1]
    down = image[1:, :] - image[:-1, :]
    return np.sum(across ** 2) + np.sum(down ** 2)


def loss(guess, observed, smoothness):
    """How far blur(guess) is from what we observed, plus a little smoothing."""
    residual = blur(guess) - observed
    return np.sum(residual ** 2) + smoothness * roughness(guess)


def sample_image(size=48):
    """A deterministic scene: a shaded background, a bright square and a dark disc."""
    y, x = np.mgrid[0:size, 0:size] / (size - 1)
    image = 0.2 + 0.3 * x
    image[size // 6:size // 2, size // 6:size // 2] = 0.9
    disc = (x - 0.65) ** 2 + (y - 0.65) ** 2 < 0.2 ** 2
    image[disc] = 0.05
    return image


def rms(a, b):
    """Root-mean-square difference between two images."""
    return float(np.sqrt(np.mean((a - b) ** 2)))


def deblur(observed, truth, steps, learning_rate=0.9, smoothness=1e-4, report_every=30):
    """Gradient descent from the blurred image; prints loss and error to the truth."""
    loss_gradient = s2s_ad.value_and_grad(loss, wrt="guess")
    guess = observed.copy()
    print(f"{'step':>5} {'loss':>12} {'error to truth':>15}")
    for step in range(steps):
        value, gradient = loss_gradient(guess, observed, smoothness)
        if step % report_every == 0:
            print(f"{step:>5} {value:>12.6f} {rms(guess, truth):>15.5f}")
        guess = guess - learning_rate * gradient
    print(f"{steps:>5} {loss(guess, observed, smoothness):>12.6f} {rms(guess, truth):>15.5f}")
    return guess


def save_images(folder, images):
    """Write each image as a greyscale PNG with Pillow or matplotlib, if either is installed."""
    try:
        from PIL import Image

        def write(path, image):
            Image.fromarray((np.clip(image, 0, 1) * 255).astype(np.uint8)).save(path)
    except ImportError:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            def write(path, image):
                plt.imsave(path, np.clip(image, 0, 1), cmap="gray", vmin=0, vmax=1)
        except ImportError:
            print("(neither Pillow nor matplotlib is installed: no PNGs written)")
            return
    folder = pathlib.Path(folder or tempfile.mkdtemp(prefix="deblur-"))
    folder.mkdir(parents=True, exist_ok=True)
    for name, image in images.items():
        write(folder / f"{name}.png", image)
    print(f"images written to {folder}: {', '.join(f'{name}.png' for name in images)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--out", help="folder for the PNGs (default: a new temporary folder)")
    options = parser.parse_args()

    truth = sample_image()
    observed = blur(truth)
    print(f"48x48 image, 3x3 box blur; error of the blurred image to the truth: {rms(observed, truth):.5f}")
    recovered = deblur(observed, truth, options.steps)
    before, after = rms(observed, truth), rms(recovered, truth)
    print(f"error to truth: {before:.5f} blurred -> {after:.5f} recovered ({after / before:.0%} of the blurred error)")
    save_images(options.out, {"sharp": truth, "blurred": observed, "recovered": recovered})


if __name__ == "__main__":
    main()
