"""Optimising a week of heating through a 1,000-step simulation loop.

A room loses heat to the outside and gains it from a heater. Every 10
minutes, for 1,000 steps (about a week),

    temps[t + 1] = temps[t] + STEP_HOURS * (LEAK * (outside[t] - temps[t]) + HEATER * heat[t])

The cost adds discomfort (squared distance from 21 degrees while someone is
home) and the price of the energy (cheaper at night). s2s_ad differentiates
the cost through the whole Python loop, which reads and writes NumPy arrays
element by element, with respect to all 1,000 heater settings at once, and
projected gradient descent with momentum (heat >= 0 after each step) lowers
it. Starting from a constant 3 kW, the optimiser learns to heat hard in the
hours before people come home and to let the room cool while it is empty.

Run: python examples/building_heating.py [--iterations N]
"""
import argparse

import numpy as np

import s2s_ad

STEP_HOURS = 1 / 6      # 10 minutes
LEAK = 0.1              # fraction of the indoor-outdoor difference lost per hour
HEATER = 0.5            # degrees per hour for each kW of heating
WANTED = 21.0           # degrees, while someone is home
START = 15.0            # degrees at the start of the week


def simulate(heat, outside, start):
    """Indoor temperature at each step (one more value than heater settings)."""
    steps = len(heat)
    temps = np.zeros(steps + 1)
    temps[0] = start
    for t in range(steps):
        gain = LEAK * (outside[t] - temps[t]) + HEATER * heat[t]
        temps[t + 1] = temps[t] + STEP_HOURS * gain
    return temps


def cost(heat, outside, occupied, price):
    """Discomfort (degrees squared times hours, while occupied) plus the energy bill."""
    temps = simulate(heat, outside, START)
    discomfort = np.sum(occupied * (temps[1:] - WANTED) ** 2) * STEP_HOURS
    bill = np.sum(price * heat) * STEP_HOURS
    return discomfort + bill


def week(steps=1000):
    """Outside temperature, occupancy (7:00-9:00 and 17:00-23:00) and price per kWh, per step."""
    hour = (np.arange(steps) * STEP_HOURS) % 24
    outside = 5.0 - 5.0 * np.cos(2 * np.pi * (hour - 3) / 24)
    occupied = (((hour >= 7) & (hour < 9)) | ((hour >= 17) & (hour < 23))).astype(float)
    price = np.where((hour >= 7) & (hour < 23), 0.30, 0.15)
    return outside, occupied, price


def optimise(heat, outside, occupied, price, iterations, learning_rate=0.4, momentum=0.9, report_every=50):
    """Projected gradient descent with momentum: a step, then clip the heating at zero."""
    cost_gradient = s2s_ad.value_and_grad(cost, wrt="heat")
    step = np.zeros_like(heat)
    for iteration in range(iterations):
        value, gradient = cost_gradient(heat, outside, occupied, price)
        if iteration % report_every == 0:
            print(f"iteration {iteration:>4}: cost {value:10.2f}")
        step = momentum * step - learning_rate * gradient
        new_heat = np.maximum(heat + step, 0.0)
        step = new_heat - heat          # the step actually taken, after clipping
        heat = new_heat
    return heat


def describe(label, heat, outside, occupied, price):
    """One line: cost, energy used, and the range of temperatures while someone is home."""
    temps = simulate(heat, outside, START)
    home = occupied > 0
    print(f"{label:>7}: cost {cost(heat, outside, occupied, price):10.2f}   "
          f"energy {np.sum(heat) * STEP_HOURS:6.1f} kWh   "
          f"temperature while home {np.min(temps[1:][home]):5.1f} to {np.max(temps[1:][home]):5.1f} degrees")


def show_day(day, heat, outside, occupied):
    """Hourly heating and temperature over one day of the schedule."""
    per_hour = round(1 / STEP_HOURS)
    hours = slice(day * 24 * per_hour, (day + 1) * 24 * per_hour)
    temps = simulate(heat, outside, START)[1:]
    print(f"day {day + 1}, hour by hour (* = someone home):")
    print("  hour    " + "".join(f"{h:>5}" for h in range(24)))
    print("  home    " + "".join(f"{'*' if o else '':>5}" for o in occupied[hours][::per_hour]))
    print("  kW      " + "".join(f"{h:5.1f}" for h in heat[hours].reshape(24, per_hour).mean(axis=1)))
    print("  degrees " + "".join(f"{t:5.1f}" for t in temps[hours][per_hour - 1::per_hour]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=300)
    options = parser.parse_args()

    outside, occupied, price = week()
    heat = np.full(len(outside), 3.0)   # a thermostat-free guess: 3 kW all the time
    print(f"{len(heat)} steps of {STEP_HOURS * 60:.0f} minutes; optimising {len(heat)} heater settings")
    describe("before", heat, outside, occupied, price)
    best = optimise(heat, outside, occupied, price, options.iterations)
    describe("after", best, outside, occupied, price)
    before, after = cost(heat, outside, occupied, price), cost(best, outside, occupied, price)
    print(f"cost: {before:.2f} -> {after:.2f} ({after / before:.1%} of the start)")
    print(f"heater off for {np.mean(best == 0):.0%} of the week")
    show_day(2, best, outside, occupied)


if __name__ == "__main__":
    main()
